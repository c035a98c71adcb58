// The desktop app. Everything lives in batchfit_ui; see ui/gui/batchfit_app.h for the options.
#include "gui/shell/batchfit_app.h"

int main(int argc, char** argv) {
    return batchfit::BatchFitApp::run(argc, argv);
}
