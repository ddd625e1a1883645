// test/demo is no package, so repo lint passes it by: the root's lint:demo lints
// it with test/integration's rules and dependencies (whose jest also runs
// supervisor.test.ts).
module.exports = require('../integration/.eslintrc.js');
