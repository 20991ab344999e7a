import { pulseProcedure } from './pulse-beacon.ts';

export default pulseProcedure('system.pulse', '/v1/pulse');
