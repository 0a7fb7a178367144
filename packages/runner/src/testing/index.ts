/**
 * Test helpers other packages and examples use: `import { ... } from '@agentrl/runner/testing'`.
 * The OpenAI wire-format test server lives in `@agentrl/model-openai/testing` (re-exported here).
 */
export {
  type OpenAITestServerOptions,
  type ReceivedRequest,
  startOpenAITestServer,
  type TestServer,
} from '@agentrl/model-openai/testing';
