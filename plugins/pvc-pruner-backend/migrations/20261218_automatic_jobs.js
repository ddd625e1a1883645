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
 * Automatic prunes, started by the plugin itself per an entity's auto-prune
 * annotation: the entity they act on behalf of, and the run that started
 * them. Jobs a person started have neither.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('pvc_pruner_jobs', table => {
    table
      .text('on_behalf_of')
      .nullable()
      .comment('automatic prunes: the entity whose auto-prune annotation they act on');
    table
      .string('automatic_run_id', 64)
      .nullable()
      .comment('automatic prunes: the run that started them');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('pvc_pruner_jobs', table => {
    table.dropColumn('automatic_run_id');
    table.dropColumn('on_behalf_of');
  });
};
