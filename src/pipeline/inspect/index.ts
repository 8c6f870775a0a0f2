export { checkJsonDepth, inspectJsonBytes, jsonNestingDepth, MAX_JSON_DEPTH } from './json.js';
