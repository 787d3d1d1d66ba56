#!/usr/bin/env node
/**
 * The package's command, `controller-introspection` (package.json's `bin`): the process around
 * {@link runCli}. Sets the exit status rather than exiting, so that what was written to a pipe is
 * flushed first.
 */
import { runCli } from './doctor';

// A reader that goes away early (`| head`) is not an error of the doctor's.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

void runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then((code) => {
  process.exitCode = code;
});
