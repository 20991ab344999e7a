import { pulseProcedure } from './_pulse.ts';

export default pulseProcedure('system.pulse', '/v1/pulse');
