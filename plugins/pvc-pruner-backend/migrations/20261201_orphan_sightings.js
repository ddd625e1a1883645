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
 * When pvc-pruner first saw each claim as an orphan, by uid (a claim deleted
 * and re-created under the same name is a new claim). Portable as in the
 * first migration: the timestamp has no database default; the store writes
 * JavaScript Dates.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_orphan_sightings', table => {
    table.comment('The first time a scan saw a claim as an orphan');
    table.string('uid', 64).primary().notNullable().comment('the claim uid');
    table.string('cluster', 255).notNullable();
    table.string('namespace', 255).notNullable();
    table.string('name', 255).notNullable().comment('the claim name');
    table.timestamp('first_seen_at', { useTz: true }).notNullable();
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_orphan_sightings');
};
