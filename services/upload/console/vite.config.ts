// The console is served by the upload service under /console (docproc_upload.console).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets" },
});
