// Help → Documentation: every docs/ page is in the app, rendered, and links between pages work offline.
#include "catch_compat.h"
#include "gui/shell/docs_window.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QDir>
#include <QTextBrowser>
#include <QUrl>

using namespace batchfit;

TEST_CASE("Help > Documentation shows every docs page, offline, and follows links between them", "[docs]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    auto* action = w.findChild<QAction*>(QStringLiteral("documentationAction"));
    REQUIRE(action);
    CHECK(action->shortcut() == QKeySequence(QKeySequence::HelpContents));
    action->trigger();
    DocsWindow* docs = w.docsWindow();
    REQUIRE(docs);
    CHECK(docs->isVisible());

    // Every page of docs/ is built in (a page added to docs/ must be added to resources/batchfit.qrc).
    const QStringList onDisk = QDir(QStringLiteral(BATCHFIT_TEST_DATA "/../../docs"))
                                   .entryList({QStringLiteral("*.md")}, QDir::Files);
    REQUIRE(onDisk.size() >= 5);
    QStringList built = docs->pages();
    built.sort();
    CHECK(built == onDisk);
    CHECK(docs->pages().first() == QStringLiteral("memory-model.md"));

    // Rendered as Markdown (a heading, not "# ..." text).
    CHECK(docs->currentPage() == QStringLiteral("memory-model.md"));
    const QString text = docs->browser()->toPlainText();
    CHECK(text.contains(QStringLiteral("memory")));
    CHECK_FALSE(text.startsWith(QStringLiteral("# ")));

    // A link between pages (relative, as written in docs/) opens the page here.
    docs->browser()->setSource(QUrl(QStringLiteral("estimate-fields.md")));
    CHECK(docs->currentPage() == QStringLiteral("estimate-fields.md"));
    CHECK_FALSE(docs->browser()->toPlainText().startsWith(QStringLiteral("#")));
    REQUIRE(docs->showPage(QStringLiteral("model-format.md")));
    CHECK(docs->browser()->toPlainText().contains(QStringLiteral("\"training\"")));
    docs->browser()->backward();
    CHECK(docs->currentPage() == QStringLiteral("estimate-fields.md"));
    CHECK_FALSE(docs->showPage(QStringLiteral("no-such-page.md")));
}
