export function startNodeFlags(): string[];
