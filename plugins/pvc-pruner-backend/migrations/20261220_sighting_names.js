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
 * Sightings are forgotten by claim name (a claim seen in use is named by the
 * pods that mount it, or by its StatefulSet and ordinal), in batches, so the
 * name needs an index.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('pvc_pruner_orphan_sightings', table => {
    table.index(
      ['cluster', 'namespace', 'name'],
      'pvc_pruner_orphan_sightings_name_idx',
    );
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('pvc_pruner_orphan_sightings', table => {
    table.dropIndex(
      ['cluster', 'namespace', 'name'],
      'pvc_pruner_orphan_sightings_name_idx',
    );
  });
};
