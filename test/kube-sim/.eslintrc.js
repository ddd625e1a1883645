module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  rules: {
    // expectStatus() is the conformance suite's assertion on a metav1.Status answer.
    'jest/expect-expect': [
      'warn',
      { assertFunctionNames: ['expect', 'expectStatus'] },
    ],
  },
});
