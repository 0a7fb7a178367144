'use strict';
// node run-require.cjs <scenario>: the scenario with every package loaded through require().
const scenarios = require('./scenarios.cjs');
const name = process.argv[2];
scenarios[name]
  .run(async (specifier) => require(specifier))
  .then((line) => console.log(`require: ${line}`))
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
