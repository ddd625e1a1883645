module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  // The fixture is the consumer's app, installed outside this repository.
  ignorePatterns: ['fixture/'],
});
