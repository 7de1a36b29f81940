/** Vite's `?inline` CSS imports: the stylesheet as a string (used for the shadow-root dialog). */
declare module '*.css?inline' {
  const css: string;
  export default css;
}
