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
 * The entities the volumes of a reclaim job were traced to when it started,
 * so that reading the job needs what listing its volumes needed: read on
 * every one of them. A JSON object with claimants and unverified (recorded
 * claimants whose entity was gone or re-created). Prunes and reclaims
 * stored before this have none.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('pvc_pruner_jobs', table => {
    table
      .text('traced_claimants')
      .nullable()
      .comment('reclaim jobs: JSON of the entities their volumes were traced to');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('pvc_pruner_jobs', table => {
    table.dropColumn('traced_claimants');
  });
};
