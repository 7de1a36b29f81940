export interface DependencyFix {
  package: string;
  version: string;
  file: string;
  edits: { find: string; replace: string }[];
}
export const FIXES: DependencyFix[];
export function applyFixes(nodeModules: string): string[];
