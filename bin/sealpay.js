#!/usr/bin/env node
// The CLI runs from TypeScript sources by type stripping (Node 24).
import '../src/main.ts';
