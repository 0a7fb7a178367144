/**
 * Test helpers other packages and examples use: `import { ... } from '@agentrl/model-openai/testing'`.
 */
export {
  type OpenAITestServerOptions,
  type ReceivedRequest,
  startOpenAITestServer,
  type TestServer,
} from './openai-test-server.ts';
