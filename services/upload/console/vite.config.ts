// The console is served by the upload service under /console (docproc_upload.console).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  // Into the Python package (docproc_upload/console_dist, a wheel artifact): the built
  // console ships inside docproc-upload, in a checkout and in the image alike.
  build: { outDir: "../src/docproc_upload/console_dist", emptyOutDir: true, assetsDir: "assets" },
});
