// `make integration` runs this before jest: the same reachability check and message as
// the jest globalSetup (libs/testing), as a plain exit code for make.
import { checkServices, formatServicesMessage, ServicesUnavailableError } from '@selfstack/testing';

checkServices().then(
  (statuses) => {
    process.stdout.write(`${formatServicesMessage(statuses)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof ServicesUnavailableError ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
