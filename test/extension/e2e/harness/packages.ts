/**
 * The unpacked store packages the global setup made (`wxt zip`, `wxt zip -b firefox`): what a
 * user installs, and what every end-to-end test loads.
 */
import { inject } from 'vitest';

export interface UnpackedPackage {
  /** The zip as `wxt zip` wrote it in .output/. */
  zip: string;
  /** The folder it was unpacked into. */
  dir: string;
  /** Every file in it, `/`-separated, sorted. */
  files: string[];
}

export interface ExtensionPackages {
  chrome: UnpackedPackage;
  firefox: UnpackedPackage;
}

declare module 'vitest' {
  export interface ProvidedContext {
    extensionPackages: ExtensionPackages;
  }
}

export function extensionPackages(): ExtensionPackages {
  const packages = inject('extensionPackages');
  if (!packages) throw new Error('no extension packages: run these tests through the extension-e2e project, whose global setup makes them');
  return packages;
}
