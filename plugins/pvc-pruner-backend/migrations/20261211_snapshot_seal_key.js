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
 * The backend's secret keys, by name. The first is the key that seals
 * pvc-pruner's VolumeSnapshots (an HMAC over what identifies each), so that
 * its own snapshots can be told from any that someone labelled as its own:
 * only sealed ones are listed, restored, kept or expired. Made once, by the
 * first replica to start, and shared by all through the database.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('pvc_pruner_keys', table => {
    // No apostrophe: knex writes a PostgreSQL table comment into the SQL unescaped.
    table.comment('The secret keys of pvc-pruner, made by the backend itself');
    table.string('name', 64).primary().notNullable();
    table.string('secret', 128).notNullable().comment('base64');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('pvc_pruner_keys');
};
