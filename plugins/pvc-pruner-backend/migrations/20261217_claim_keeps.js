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
 * Claims kept from automatic pruning through the card (by cluster, claim
 * uid and the entity kept through: each entity claiming a StatefulSet keeps
 * its claims apart, and one team cannot end another team keep), and the fence an automatic job sets on a claim before it deletes it:
 * a keep written while its claim is marked is refused. Portable as in the
 * first migration: no database defaults; the store writes JavaScript Dates.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_claim_keeps', table => {
    table.comment('Claims kept from automatic pruning through the card');
    table.string('cluster', 255).notNullable();
    table.string('uid', 64).notNullable().comment('the claim uid');
    table.string('namespace', 255).notNullable();
    table.string('claim_name', 255).notNullable();
    table.string('entity_ref', 1024).notNullable();
    table.text('reason').notNullable();
    table
      .timestamp('until', { useTz: true })
      .nullable()
      .comment('the end of the keep; none: until removed');
    table.string('kept_by', 1024).notNullable().comment('a user entity ref');
    table.timestamp('kept_at', { useTz: true }).notNullable();
    table.primary(['cluster', 'uid', 'entity_ref']);
  });
  await knex.schema.createTable('pvc_pruner_claim_deleting', table => {
    table.comment('Claims an automatic prune job is deleting: no keep of them is acknowledged');
    table.string('cluster', 255).notNullable();
    table.string('uid', 64).notNullable().comment('the claim uid');
    table.string('job_id', 64).notNullable();
    table.timestamp('marked_at', { useTz: true }).notNullable();
    table.primary(['cluster', 'uid']);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_claim_deleting');
  await knex.schema.dropTable('pvc_pruner_claim_keeps');
};
