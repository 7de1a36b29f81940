/**
 * What the app is built from (`AppDeps`) and what each capability's `routes(deps)` receives
 * (`RouteDeps`), for capabilities to name without importing the composition root that builds
 * them: deps.ts imports every capability, so a capability importing it back would close an
 * import circle through all of them (DESIGN.md §1).
 *
 * The members are declared by the composition root that builds the object (deps.ts `openDeps`,
 * app.ts `createApp`), by TypeScript declaration merging onto these interfaces, the way a
 * plugin adds its entry to a framework's context map:
 *
 *   declare module './core/app-deps.ts' { interface AppDeps { sealer: SealPipeline } }
 *
 * Merging is global to the program, so a capability reading `deps.<member>` compiles against
 * the root's declaration without importing it.
 */

/** What the app is built from; its members are declared in deps.ts. */
export interface AppDeps {}

/** What each capability's `routes(deps)` receives: the app's deps plus what deps.ts declares here (auth requirements, the OpenAPI document). */
export interface RouteDeps extends AppDeps {}
