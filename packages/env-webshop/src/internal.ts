/**
 * @agentrl/env-webshop/internal — Python's text conventions that WebShop's pages and strings
 * carry, reproduced so our pages match the reference byte for byte: `repr` of a float and of a
 * string, `str.strip`, and Jinja's `tojson` of the chosen options. Helpers of the shop site and
 * the catalogue, not part of the environment's API; they may change in any release.
 */
export { tojsonOptions } from './pages.ts';
export { pyFloatRepr, pyStrip, pyStrRepr } from './python-format.ts';
