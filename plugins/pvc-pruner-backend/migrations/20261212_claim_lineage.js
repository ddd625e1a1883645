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
 * What each claim belonged to, by cluster and claim uid: the StatefulSet
 * (name and uid) whose template and ordinal name it, and the catalog
 * entities that claimed that StatefulSet, as a scan last saw them. Once the
 * StatefulSet is deleted its claims stay (whenDeleted: Retain), and this is
 * what still says whose they were (issue 19). Keyed by cluster as well as
 * uid, so that one cluster's API server cannot overwrite what another's
 * claims belonged to. Portable as in the first migration: no database
 * default; the store writes JavaScript Dates.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_claim_lineage', table => {
    table.comment('What StatefulSet, and whose, each claim belonged to');
    table.string('cluster', 255).notNullable();
    table.string('claim_uid', 64).notNullable().comment('the claim uid');
    table.string('namespace', 255).notNullable();
    table.string('stateful_set', 255).notNullable().comment('its name');
    table.string('stateful_set_uid', 64).notNullable();
    table.string('template', 255).notNullable().comment('volumeClaimTemplate');
    table.integer('ordinal').notNullable();
    table
      .text('claimants')
      .notNullable()
      .comment('JSON array of entity refs, at most 20');
    table
      .boolean('claimants_crowded')
      .notNullable()
      .comment('more claimants than were kept: the list is not the whole');
    table.timestamp('last_seen_at', { useTz: true }).notNullable();
    table.primary(['cluster', 'claim_uid']);
    table.index(
      ['cluster', 'namespace', 'stateful_set'],
      'pvc_pruner_lineage_sts_idx',
    );
    table.index(['last_seen_at'], 'pvc_pruner_lineage_seen_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_claim_lineage');
};
