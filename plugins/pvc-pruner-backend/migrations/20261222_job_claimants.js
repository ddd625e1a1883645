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
 * Prune jobs: every entity in the catalog that claimed the StatefulSet when
 * the job was authorized, a row each. Any catalog author can co-claim a
 * StatefulSet, and an automatic prune's entity is picked among the
 * claimants, so a job is read only by who may read each, and listed in each
 * one's history. Jobs stored before have none.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_job_claimants', table => {
    table.comment(
      'The entities that claimed the StatefulSet of a prune job when it was authorized',
    );
    table.string('job_id', 64).notNullable();
    table.string('entity_ref', 255).notNullable();
    table.primary(['job_id', 'entity_ref']);
    table.index(['entity_ref'], 'pvc_pruner_job_claimants_entity_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_job_claimants');
};
