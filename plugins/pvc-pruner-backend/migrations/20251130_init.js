/*
 * Copyright 2025 The pvc-pruner Authors
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

// @ts-check

/*
 * Prune jobs and their ordered event logs.
 *
 * Portability rules (better-sqlite3 and PostgreSQL):
 * - Timestamps are `timestamp` columns with a time zone and have no database
 *   default: the store always writes JavaScript Dates, which knex stores as
 *   epoch milliseconds on SQLite and as timestamptz on PostgreSQL, so they
 *   compare and sort correctly on both. (A `now()` default would store text on
 *   SQLite and break the ordering.)
 * - JSON is `text` written with JSON.stringify.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_jobs', table => {
    table.comment('One prune (or dry run) of orphaned claims of a StatefulSet');
    table.string('id', 64).primary().notNullable().comment('uuid');
    table.string('entity_ref', 255).notNullable();
    table.string('cluster', 255).notNullable();
    table.string('namespace', 255).notNullable();
    table.string('stateful_set', 255).notNullable();
    table.boolean('dry_run').notNullable();
    table
      .string('status', 16)
      .notNullable()
      .comment('queued, running, succeeded, failed, aborted or interrupted');
    table.string('requested_by', 255).notNullable();
    table.text('pvcs').notNullable().comment('JSON: [{ name, uid }]');
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('started_at', { useTz: true }).nullable();
    table.timestamp('finished_at', { useTz: true }).nullable();
    table.text('reason').nullable();
    table.text('summary').notNullable().comment('JSON: PruneSummary');
    table
      .integer('last_seq')
      .notNullable()
      .defaultTo(0)
      .comment('seq of the newest event; bumped in the same transaction');
    table
      .string('owner_instance', 255)
      .nullable()
      .comment('the live backend process running the job');
    table.timestamp('heartbeat_at', { useTz: true }).nullable();

    table.index(
      ['entity_ref', 'created_at'],
      'pvc_pruner_jobs_entity_created_idx',
    );
    table.index(['created_at'], 'pvc_pruner_jobs_created_idx');
    table.index(['status'], 'pvc_pruner_jobs_status_idx');
  });

  await knex.schema.createTable('pvc_pruner_job_events', table => {
    table.comment('The ordered event log of a prune job');
    table
      .string('job_id', 64)
      .notNullable()
      .references('id')
      .inTable('pvc_pruner_jobs')
      .onDelete('CASCADE');
    table.integer('seq').notNullable().comment('1, 2, 3, … per job');
    table.string('type', 32).notNullable();
    table.timestamp('at', { useTz: true }).notNullable();
    table.string('pvc', 255).nullable();
    table.text('message').notNullable();
    table.string('status', 16).nullable();
    table.text('outcome').nullable().comment('JSON: PvcOutcome');

    table.primary(['job_id', 'seq']);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_job_events');
  await knex.schema.dropTable('pvc_pruner_jobs');
};
