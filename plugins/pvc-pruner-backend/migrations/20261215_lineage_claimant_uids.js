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
 * The catalog uid of each recorded claimant, beside its entity ref. A ref is
 * a name anyone who writes catalog YAML can register again once the entity
 * is gone; the uid says whether the entity that claims a volume today is
 * the one that claimed it then. Rows written before this have none, and
 * their claimants count as unverifiable.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('pvc_pruner_claim_lineage', table => {
    table
      .text('claimant_uids')
      .nullable()
      .comment('JSON object from claimant entity ref to its catalog uid');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('pvc_pruner_claim_lineage', table => {
    table.dropColumn('claimant_uids');
  });
};
