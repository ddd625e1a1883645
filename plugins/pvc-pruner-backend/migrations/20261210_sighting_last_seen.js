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
 * When a scan last saw each claim as an orphan, so that retention deletes
 * the sightings of claims no scan has seen for `pvcPruner.retentionDays`,
 * never those of claims that are still orphans (that would make an old
 * orphan look new). Nullable: a row written before this column, or by a
 * replica not yet upgraded, counts as last seen when it was first seen.
 * Portable as in the first migration: no database default.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('pvc_pruner_orphan_sightings', table => {
    table.timestamp('last_seen_at', { useTz: true }).nullable();
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('pvc_pruner_orphan_sightings', table => {
    table.dropColumn('last_seen_at');
  });
};
