export function projectCollection(cwd: string): string;
