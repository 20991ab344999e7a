import { pulseProcedure } from './_pulse.ts';

export default pulseProcedure('system.track', '/v1/track');
