import { pulseProcedure } from './pulse-beacon.ts';

export default pulseProcedure('system.track', '/v1/track');
