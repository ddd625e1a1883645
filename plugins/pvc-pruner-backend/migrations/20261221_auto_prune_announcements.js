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
 * When automatic pruning first announced each claim (planned it as eligible
 * or upcoming for an automated StatefulSet), by cluster and claim uid: no
 * claim is deleted automatically before notifyBefore has passed since then.
 * A row goes when a run no longer plans its claim. Timestamps have no
 * database default; the store writes the database clock.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable(
    'pvc_pruner_auto_prune_announcements',
    table => {
      table.comment(
        'When automatic pruning first announced a claim to its owners',
      );
      table.string('cluster', 255).notNullable();
      table.string('uid', 64).notNullable().comment('the claim uid');
      table.timestamp('announced_at', { useTz: true }).notNullable();
      table
        .timestamp('planned_at', { useTz: true })
        .notNullable()
        .comment('the last run that planned the claim');
      table
        .string('planned_by', 64)
        .notNullable()
        .comment('a token of the last run that planned the claim');
      table.primary(['cluster', 'uid']);
      table.index(
        ['planned_at'],
        'pvc_pruner_auto_prune_announcements_planned_idx',
      );
    },
  );
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_auto_prune_announcements');
};
