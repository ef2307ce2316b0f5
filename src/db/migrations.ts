import type { Kysely, Migration } from 'kysely';
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
  };
}
