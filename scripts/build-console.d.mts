/** Bundles the tenant console into `outDir` (default dist/console); resolves to that folder. */
export function buildConsole(outDir?: string): Promise<string>;
