#include "gui/shell/docs_window.h"

#include <QDir>
#include <QFile>
#include <QHBoxLayout>
#include <QListWidget>
#include <QSplitter>
#include <QTextBrowser>
#include <QUrl>

namespace batchfit {

namespace {

const QString kRoot = QStringLiteral(":/docs/");

/// The page's first "# " heading, or its file name.
QString pageTitle(const QString& fileName) {
    QFile f(kRoot + fileName);
    if (f.open(QIODevice::ReadOnly))
        for (int i = 0; i < 20 && !f.atEnd(); ++i) {
            const QString line = QString::fromUtf8(f.readLine()).trimmed();
            if (line.startsWith(QLatin1String("# "))) return line.mid(2).remove(QLatin1Char('`'));
        }
    return fileName;
}

} // namespace

DocsWindow::DocsWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setObjectName(QStringLiteral("DocsWindow"));
    setWindowTitle(tr("BatchFit Documentation"));
    m_pages = QDir(kRoot).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name);
    // The memory model is where a reader starts; the rest alphabetically.
    if (m_pages.removeOne(QStringLiteral("memory-model.md")))
        m_pages.prepend(QStringLiteral("memory-model.md"));

    auto* split = new QSplitter(this);
    m_list = new QListWidget(split);
    for (const QString& page : m_pages) {
        auto* item = new QListWidgetItem(pageTitle(page), m_list);
        item->setData(Qt::UserRole, page);
        item->setToolTip(QStringLiteral("docs/") + page);
    }
    m_browser = new QTextBrowser(split);
    m_browser->setOpenExternalLinks(true); // web links (sources) open in the browser; page links stay here
    m_browser->setSearchPaths({kRoot});
    split->addWidget(m_list);
    split->addWidget(m_browser);
    split->setStretchFactor(1, 1);
    split->setSizes({240, 760});
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row < m_pages.size() && currentPage() != m_pages[row]) showPage(m_pages[row]);
    });
    connect(m_browser, &QTextBrowser::sourceChanged, this, [this] {
        const int row = static_cast<int>(m_pages.indexOf(currentPage()));
        if (row >= 0 && m_list->currentRow() != row) m_list->setCurrentRow(row);
    });
    resize(1000, 700);
    if (!m_pages.isEmpty()) showPage(m_pages.first());
}

bool DocsWindow::showPage(const QString& fileName) {
    if (!QFile::exists(kRoot + fileName)) return false;
    m_browser->setSource(QUrl(QStringLiteral("qrc") + kRoot + fileName), QTextDocument::MarkdownResource);
    return true;
}

QString DocsWindow::currentPage() const {
    return m_browser->source().fileName();
}

} // namespace batchfit
