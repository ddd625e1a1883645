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
 * Automatic pruning (issue 20): one row per scheduled run with its summary,
 * and the before-notices already sent, by notification scope, so that an
 * owner is told once that claims will be pruned, not on every run.
 * Timestamps have no database default; the store writes the database clock.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_auto_prune_runs', table => {
    table.comment('One automatic pruning run and its summary');
    table.string('id', 36).primary().notNullable();
    table.timestamp('started_at', { useTz: true }).notNullable();
    table.timestamp('finished_at', { useTz: true }).nullable();
    table
      .string('status', 32)
      .notNullable()
      .comment('running, finished, stopped-at-limit, refused or failed');
    table.integer('considered').notNullable().defaultTo(0);
    table.integer('eligible').notNullable().defaultTo(0);
    table.integer('deleted').notNullable().defaultTo(0);
    table.integer('kept').notNullable().defaultTo(0);
    table.bigInteger('bytes_deleted').notNullable().defaultTo(0);
    table
      .integer('state_sets')
      .notNullable()
      .defaultTo(0)
      .comment('StatefulSets pruned');
    table.integer('dry_run_failures').notNullable().defaultTo(0);
    table.text('stopped_because').nullable();
    table
      .text('outcomes')
      .nullable()
      .comment(
        'capped JSON of what became of each StatefulSet, for the log and audit; never served',
      );
    table.index(['started_at'], 'pvc_pruner_auto_prune_runs_started_idx');
  });
  await knex.schema.createTable('pvc_pruner_auto_prune_notices', table => {
    table.comment('Before-notices sent, by notification scope');
    table.string('scope', 512).primary().notNullable();
    table.timestamp('sent_at', { useTz: true }).notNullable();
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_auto_prune_notices');
  await knex.schema.dropTable('pvc_pruner_auto_prune_runs');
};
