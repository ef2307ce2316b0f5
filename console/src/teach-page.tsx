/**
 * "Teach your task": the page loads the account's examples, jobs, adapters, retention and live
 * calibration together (polled every second while a job is queued or running) and shows them by
 * section, each in its own file; every section reports to the page's one message area.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { AdaptersSection } from './adapters-section.tsx';
import {
  type Adapter,
  api,
  type CalibrationReport,
  type ExampleSummary,
  isApiError,
  type RetentionPolicy,
  type TrainingJob,
} from './api.ts';
import { DistillSection } from './distill-section.tsx';
import { ExamplesSection } from './examples-section.tsx';
import { TrainingSection } from './jobs-section.tsx';
import { LiveCalibrationSection } from './live-calibration-section.tsx';
import { describeQuestion, isActive, type PageMessages } from './teach-model.ts';
import { Alert, PageHeading } from './ui.tsx';

export function TeachPage() {
  const [examples, setExamples] = useState<ExampleSummary | null>(null);
  const [jobs, setJobs] = useState<TrainingJob[]>([]);
  const [adapters, setAdapters] = useState<Adapter[]>([]);
  const [retention, setRetention] = useState<RetentionPolicy | null>(null);
  const [calibration, setCalibration] = useState<CalibrationReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [issues, setIssues] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | null>(null);

  const messages = useMemo<PageMessages>(
    () => ({
      error(message, list = []) {
        setError(message);
        setIssues(list);
      },
      notice: setNotice,
      clear() {
        setError(null);
        setIssues([]);
        setNotice(null);
      },
    }),
    [],
  );

  const load = useCallback(async () => {
    try {
      const [e, j, a, r, c] = await Promise.all([
        api<ExampleSummary>('/control/v1/examples'),
        api<{ data: TrainingJob[] }>('/control/v1/training-jobs'),
        api<{ data: Adapter[] }>('/control/v1/adapters'),
        api<RetentionPolicy>('/control/v1/retention'),
        api<CalibrationReport>('/control/v1/calibration'),
      ]);
      setExamples(e);
      setJobs(j.data);
      setAdapters(a.data);
      setRetention(r);
      setCalibration(c);
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not load this page');
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  // While a job is queued or running, its progress is polled every second.
  const active = jobs.some((j) => isActive(j.status));
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void load(), 1000);
    return () => clearInterval(timer);
  }, [active, load]);

  async function cancel(job: TrainingJob) {
    setError(null);
    try {
      await api(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
      setNotice(`Training job ${job.id} is cancelled.`);
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not cancel the job');
    }
    await load();
  }

  async function train(templates?: string[]) {
    setError(null);
    setNotice(null);
    try {
      await api('/control/v1/training-jobs', { body: templates ? { templates } : {} });
      await load();
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not queue the job');
    }
  }

  const questions = new Map((examples?.templates ?? []).map((t) => [t.id, describeQuestion(t.question)]));

  return (
    <section>
      <PageHeading title="Teach your task" />
      <p className="lead">
        Upload questions you ask with their true answers; Brier fits an adapter on them, measures it on examples it
        never saw, and serves it as a model id of your account only if it beats the base model there.
      </p>
      {error ? (
        <Alert>
          {error}
          {issues.length > 0 ? (
            <ul className="issues">
              {issues.slice(0, 20).map((m) => (
                <li key={m}>{m}</li>
              ))}
            </ul>
          ) : null}
        </Alert>
      ) : null}
      {notice ? <Alert kind="success">{notice}</Alert> : null}

      <ExamplesSection examples={examples} messages={messages} onChanged={load} />
      <DistillSection onQueued={load} />
      <TrainingSection
        jobs={jobs}
        questions={questions}
        canTrain={Boolean(examples?.templates.length)}
        onTrain={() => void train()}
        onCancel={(job) => void cancel(job)}
      />
      <AdaptersSection adapters={adapters} questions={questions} messages={messages} onChanged={load} />
      <LiveCalibrationSection
        retention={retention}
        calibration={calibration}
        busy={active}
        messages={messages}
        onRetention={setRetention}
        onRetrain={(template) => void train([template])}
      />
    </section>
  );
}
