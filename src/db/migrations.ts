import { type Kysely, type Migration, sql } from 'kysely';
import { exampleHash } from '../lib/example-hash.ts';
import { hashSessionToken } from '../lib/token-hash.ts';
import type { Dialect } from './open.ts';

/**
 * The one migration list, for SQLite and PostgreSQL alike. Portable column types only
 * (text, integer, bigint); the few dialect differences are switched on `dialect`.
 * Append new migrations; never edit one that has shipped.
 */
export function migrations(dialect: Dialect): Record<string, Migration> {
  const pg = dialect === 'postgres';
  return {
    '0001_init': {
      async up(db: Kysely<unknown>) {
        // better-auth's `user` model, so that the control plane can take it over as is.
        await db.schema
          .createTable('user')
          .ifNotExists()
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('email', 'text', (c) => c.notNull().unique())
          .addColumn('emailVerified', pg ? 'boolean' : 'integer', (c) => c.notNull())
          .addColumn('image', 'text')
          .addColumn('createdAt', pg ? 'timestamptz' : 'date', (c) => c.notNull())
          .addColumn('updatedAt', pg ? 'timestamptz' : 'date', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('api_key')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('prefix', 'text', (c) => c.notNull())
          .addColumn('hash', 'text', (c) => c.notNull().unique())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('last_used_at', 'bigint')
          .addColumn('revoked_at', 'bigint')
          .execute();
        await db.schema.createIndex('api_key_user_idx').on('api_key').columns(['user_id', 'revoked_at']).execute();
        await db.schema
          .createTable('usage_event')
          .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('ts', 'bigint', (c) => c.notNull())
          .addColumn('route', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('questions', 'integer', (c) => c.notNull())
          .addColumn('input_tokens', 'integer', (c) => c.notNull())
          .addColumn('output_tokens', 'integer', (c) => c.notNull())
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('usage_event_key_ts_idx').on('usage_event').columns(['key_id', 'ts']).execute();
        await db.schema.createIndex('usage_event_user_ts_idx').on('usage_event').columns(['user_id', 'ts']).execute();
      },
    },
    '0002_auth': {
      // better-auth's session, account and verification models, as its getMigrations() would create
      // them (checked by src/auth/schema.test.ts); `user` comes from 0001.
      async up(db: Kysely<unknown>) {
        const time = pg ? 'timestamptz' : 'date';
        const now = sql`CURRENT_TIMESTAMP`;
        await db.schema
          .createTable('session')
          .addColumn('id', 'text', (c) => c.notNull().primaryKey())
          .addColumn('expiresAt', time, (c) => c.notNull())
          .addColumn('token', 'text', (c) => c.notNull().unique())
          .addColumn('createdAt', time, (c) => (pg ? c.defaultTo(now).notNull() : c.notNull()))
          .addColumn('updatedAt', time, (c) => c.notNull())
          .addColumn('ipAddress', 'text')
          .addColumn('userAgent', 'text')
          .addColumn('userId', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .execute();
        await db.schema
          .createTable('account')
          .addColumn('id', 'text', (c) => c.notNull().primaryKey())
          .addColumn('accountId', 'text', (c) => c.notNull())
          .addColumn('providerId', 'text', (c) => c.notNull())
          .addColumn('userId', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('accessToken', 'text')
          .addColumn('refreshToken', 'text')
          .addColumn('idToken', 'text')
          .addColumn('accessTokenExpiresAt', time)
          .addColumn('refreshTokenExpiresAt', time)
          .addColumn('scope', 'text')
          .addColumn('password', 'text')
          .addColumn('createdAt', time, (c) => (pg ? c.defaultTo(now).notNull() : c.notNull()))
          .addColumn('updatedAt', time, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('verification')
          .addColumn('id', 'text', (c) => c.notNull().primaryKey())
          .addColumn('identifier', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('expiresAt', time, (c) => c.notNull())
          .addColumn('createdAt', time, (c) => (pg ? c.defaultTo(now).notNull() : c.notNull()))
          .addColumn('updatedAt', time, (c) => (pg ? c.defaultTo(now).notNull() : c.notNull()))
          .execute();
        await db.schema.createIndex('session_userId_idx').on('session').column('userId').execute();
        await db.schema.createIndex('account_userId_idx').on('account').column('userId').execute();
        await db.schema.createIndex('verification_identifier_idx').on('verification').column('identifier').execute();
      },
    },
    '0003_usage_aggregate': {
      // What is kept of a deleted account's usage: daily totals per route and model, with no user or key.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('usage_aggregate')
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('route', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('requests', 'bigint', (c) => c.notNull())
          .addColumn('errors', 'bigint', (c) => c.notNull())
          .addColumn('questions', 'bigint', (c) => c.notNull())
          .addColumn('input_tokens', 'bigint', (c) => c.notNull())
          .addColumn('output_tokens', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_aggregate_pk', ['day', 'route', 'model'])
          .execute();
      },
    },
    '0004_session_token_hash': {
      // Sessions are stored by the SHA-256 of their token from now on (src/auth/hashed-session-tokens.ts).
      // The tokens stored in clear before are hashed in place, so that signed-in users stay signed in
      // (their cookie holds the token, which is now hashed before the lookup) and no clear token is left.
      async up(db: Kysely<unknown>) {
        const session = sql.table('session');
        const rows = await sql<{ id: string; token: string }>`select id, token from ${session}`.execute(db);
        for (const { id, token } of rows.rows) {
          await sql`update ${session} set token = ${hashSessionToken(token)} where id = ${id}`.execute(db);
        }
      },
    },
    '0005_usage_event_id': {
      // Usage is written exactly once: each event carries the id its recorder gave it, and a batch
      // retried after a commit whose answer was lost skips the ids already there. Older rows have none.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('usage_event').addColumn('event_id', 'text').execute();
        await db.schema.createIndex('usage_event_event_id_idx').on('usage_event').column('event_id').unique().execute();
      },
    },
    '0006_examples': {
      // Labelled examples (issue 23): question templates per account and one row per labelled question.
      // Both go with their account (ON DELETE CASCADE; SQLite runs with foreign_keys = ON).
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('example_template')
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('question', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('example_template_pk', ['user_id', 'id'])
          .execute();
        await db.schema
          .createTable('example')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('template_id', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('label', 'text', (c) => c.notNull())
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('request_id', 'text')
          .addColumn('question_id', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('example_user_template_idx')
          .on('example')
          .columns(['user_id', 'template_id'])
          .execute();
        await db.schema
          .createIndex('example_outcome_idx')
          .on('example')
          .columns(['user_id', 'request_id', 'question_id'])
          .unique()
          .execute();
      },
    },
    '0007_retention': {
      // Opt-in retention of request content (issue 23): policies per account or key, and the retained
      // requests, which go with their account (ON DELETE CASCADE) and are deleted with their key.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('retention_policy')
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('days', 'integer', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('retention_policy_pk', ['user_id', 'scope'])
          .execute();
        await db.schema
          .createTable('retained_request')
          .addColumn('request_id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('questions', 'text', (c) => c.notNull())
          .addColumn('answers', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('retained_request_user_idx')
          .on('retained_request')
          .columns(['user_id', 'created_at'])
          .execute();
        await db.schema.createIndex('retained_request_key_idx').on('retained_request').column('key_id').execute();
        await db.schema
          .createIndex('retained_request_expiry_idx')
          .on('retained_request')
          .column('expires_at')
          .execute();
      },
    },
    '0008_adapters': {
      // Adapter training jobs, queued in the database and claimed with a lease (issue 23), and the adapters
      // they fit. Both go with their account.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('training_job')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('templates', 'text')
          .addColumn('progress', 'integer', (c) => c.notNull())
          .addColumn('stage', 'text', (c) => c.notNull())
          .addColumn('message', 'text', (c) => c.notNull())
          .addColumn('result', 'text')
          .addColumn('adapter_id', 'text')
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('started_at', 'bigint')
          .addColumn('finished_at', 'bigint')
          .execute();
        await db.schema
          .createIndex('training_job_status_idx')
          .on('training_job')
          .columns(['status', 'created_at'])
          .execute();
        await db.schema
          .createIndex('training_job_user_idx')
          .on('training_job')
          .columns(['user_id', 'created_at'])
          .execute();
        await db.schema
          .createTable('adapter')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('base_model', 'text', (c) => c.notNull())
          .addColumn('job_id', 'text', (c) => c.notNull())
          .addColumn('artifact', 'text', (c) => c.notNull())
          .addColumn('report', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('adapter_user_idx').on('adapter').column('user_id').execute();
      },
    },
    '0009_outcome_served': {
      // An outcome keeps the answer that was served for it (canonical order) and the model that served
      // it, so that the calibration of live answers can be followed after the request itself expires.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('example').addColumn('served', 'text').execute();
        await db.schema.alterTable('example').addColumn('served_by', 'text').execute();
      },
    },
    '0010_job_scheduling': {
      // Training jobs scheduled fairly and estimated (issue 33): when a job waiting for the engine may be
      // claimed again and how often it has waited, when it was last claimed (accounts take turns by it),
      // how many examples it reads, and how long its run took (the measured throughput of estimates).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('training_job').addColumn('not_before', 'bigint').execute();
        await db.schema
          .alterTable('training_job')
          .addColumn('waits', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.alterTable('training_job').addColumn('claimed_at', 'bigint').execute();
        await db.schema
          .alterTable('training_job')
          .addColumn('examples', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.alterTable('training_job').addColumn('run_ms', 'bigint').execute();
        await db.schema.createIndex('example_request_idx').on('example').columns(['user_id', 'request_id']).execute();
      },
    },
    '0011_distillation': {
      // Distillation from a teacher (issue 34): a job's kind and its spec (teacher, questions, source,
      // budget), the teacher calls it made; unlabelled states uploaded to be labelled by a teacher; the
      // teacher's distributions as soft labels, apart from human labels; an adapter's teacher and its
      // opt-in fallback; usage events count teacher calls apart.
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('training_job')
          .addColumn('kind', 'text', (c) => c.notNull().defaultTo('adapter'))
          .execute();
        await db.schema.alterTable('training_job').addColumn('spec', 'text').execute();
        await db.schema
          .alterTable('training_job')
          .addColumn('teacher_calls', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createTable('unlabelled_state')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('unlabelled_state_user_idx')
          .on('unlabelled_state')
          .columns(['user_id', 'created_at'])
          .execute();
        await db.schema
          .createTable('soft_label')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('user.id').onDelete('cascade'))
          .addColumn('template_id', 'text', (c) => c.notNull())
          .addColumn('teacher', 'text', (c) => c.notNull())
          .addColumn('state_hash', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('distribution', 'text', (c) => c.notNull())
          .addColumn('job_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('soft_label_unique_idx')
          .on('soft_label')
          .columns(['user_id', 'template_id', 'teacher', 'state_hash'])
          .unique()
          .execute();
        await db.schema.alterTable('adapter').addColumn('teacher', 'text').execute();
        await db.schema.alterTable('adapter').addColumn('fallback', 'text').execute();
        await db.schema
          .alterTable('usage_event')
          .addColumn('teacher_calls', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    '0012_usage_aggregate_teacher_calls': {
      // A deleted account's teacher calls are folded into the daily totals with its other usage.
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('usage_aggregate')
          .addColumn('teacher_calls', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    '0013_example_content_hash': {
      // An uploaded labelled question carries the hash of its template, state and label (issue 41), so
      // that an upload repeated stores nothing new. Rows uploaded before get theirs here; outcomes none
      // (a request's outcome is kept once per request and question already).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('example').addColumn('content_hash', 'text').execute();
        const example = sql.table('example');
        const rows = await sql<{ id: string; template_id: string; state: string; label: string }>`
          select id, template_id, state, label from ${example} where source = 'upload'`.execute(db);
        for (const r of rows.rows) {
          const hash = exampleHash(r.template_id, r.state, r.label);
          await sql`update ${example} set content_hash = ${hash} where id = ${r.id}`.execute(db);
        }
        await db.schema.createIndex('example_content_idx').on('example').columns(['user_id', 'content_hash']).execute();
      },
    },
    '0014_usage_job_teacher_calls': {
      // Every teacher call of a distillation job is metered (issue 41): an event with its job and no key.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('usage_event').addColumn('job_id', 'text').execute();
      },
    },
  };
}
