// node run-import.mjs <scenario>: the scenario with every package loaded through import().
import scenarios from './scenarios.cjs';

const name = process.argv[2];
const line = await scenarios[name].run((specifier) => import(specifier));
console.log(`import: ${line}`);
