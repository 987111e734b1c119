#!/usr/bin/env node
// `npx secrets` from the repository root: the TypeScript source run through tsx's loader
// (as every service runs in development), so there is no build step to forget.
'use strict';
require('tsx/cjs/api').register();
require('../src/main.ts');
