export interface CopiedAsset {
  path: string;
  readBy: string;
  what: string;
}
export const COPIED_ASSETS: CopiedAsset[];
export const BUILT_ASSETS: CopiedAsset[];
export const SOURCE_ONLY: { path: string; readBy: string; why: string }[];
export const OTHER_META_URL_USES: { file: string; reaches: string | null; why: string }[];
export function assetFiles(root: string, assetPath: string): string[];
export function copyRuntimeAssets(root: string, outDir: string): void;
