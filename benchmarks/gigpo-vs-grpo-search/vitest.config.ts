import { defineProject } from 'vitest/config';
import { agentrlVitest } from '../../vitest.shared.ts';

export default defineProject(agentrlVitest({}));
