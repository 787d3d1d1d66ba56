// main.ts imports its style sheet for esbuild, which writes it to console.css; to TypeScript the
// import has no value. TypeScript 6 checks that side-effect imports resolve (TS2882), so it is
// declared here, and the tsconfig turns that check on for TypeScript 5 too.
declare module '*.css';
