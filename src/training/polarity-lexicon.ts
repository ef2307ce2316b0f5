/**
 * The sentences that define where states lie on the polarity axis (train.ts `polarityAxis`): the
 * mean embedding of the positive ones minus that of the negative ones. Written by hand for this
 * purpose, generic (products, service, films, a person's day), and not drawn from any labelled set;
 * written once and not tuned on the sets. Measured against the words "positive" - "negative" that
 * defined the axis until brier-lite 3.5 (AUC of the state's place for the positive against the
 * negative rows, every third row up to 300 per set): sst2 0.658 -> 0.837, cr 0.684 -> 0.883,
 * airline_sentiment 0.778 -> 0.913, tweeteval_sentiment 0.697 -> 0.870, sst5 0.679 -> 0.759,
 * amazon_alexa 0.846 -> 0.936. Each pair says the same thing with the opposite polarity.
 */
export const POLARITY_LEXICON = {
  positive: [
    'I love it, it is wonderful.',
    'Excellent service, highly recommended.',
    'This was a great experience.',
    'Absolutely fantastic, thank you!',
    'The best I have ever had.',
    'I am very happy with this.',
    'Amazing quality and friendly staff.',
    'A delightful, brilliant film.',
    'Works perfectly, great value.',
    'Thank you so much, you made my day.',
    'Beautiful and enjoyable.',
    'Superb, I would buy it again.',
  ],
  negative: [
    'I hate it, it is terrible.',
    'Awful service, never again.',
    'This was a horrible experience.',
    'Absolutely dreadful, what a waste.',
    'The worst I have ever had.',
    'I am very disappointed with this.',
    'Poor quality and rude staff.',
    'A boring, stupid film.',
    'Broke after a day, total waste of money.',
    'Thanks for nothing, you ruined my day.',
    'Ugly and unpleasant.',
    'Useless, I want a refund.',
  ],
} as const;

/** The level words whose difference is the `levels` direction (which scales are polarities). */
export const POLARITY_LEVEL_WORDS = { positive: ['positive'], negative: ['negative'] } as const;

/** Every text either direction is built from (embedAll puts them in the cache). */
export const POLARITY_TEXTS: readonly string[] = [
  ...POLARITY_LEXICON.positive,
  ...POLARITY_LEXICON.negative,
  ...POLARITY_LEVEL_WORDS.positive,
  ...POLARITY_LEVEL_WORDS.negative,
];
