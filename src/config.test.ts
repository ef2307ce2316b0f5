import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  test('BRIER_LEGACY_EXTENSION_FIELDS: off unless on; anything else is refused by name', () => {
    assert.equal(loadConfig({}).legacyExtensionFields, false);
    assert.equal(loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'off' }).legacyExtensionFields, false);
    assert.equal(loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'on' }).legacyExtensionFields, true);
    assert.throws(() => loadConfig({ BRIER_LEGACY_EXTENSION_FIELDS: 'yes' }), /BRIER_LEGACY_EXTENSION_FIELDS/);
  });
});
