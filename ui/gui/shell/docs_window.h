#pragma once
// Help → Documentation: the docs/ pages (memory model, formats, accuracy), built into the app and shown
// offline.
#include <QWidget>

class QListWidget;
class QTextBrowser;

namespace batchfit {

/// A window with the list of documentation pages and a browser that renders them (Markdown) and follows the
/// links between them. Needs no browser, network or installed files: the pages are Qt resources (:/docs).
class DocsWindow : public QWidget {
    Q_OBJECT

public:
    explicit DocsWindow(QWidget* parent = nullptr);

    /// Shows a page by file name ("memory-model.md"); false when there is none.
    bool showPage(const QString& fileName);
    /// The file names of the pages, in list order (memory model first).
    QStringList pages() const { return m_pages; }
    /// The page shown, as a file name.
    QString currentPage() const;
    QTextBrowser* browser() const { return m_browser; }

private:
    QStringList m_pages;
    QListWidget* m_list = nullptr;
    QTextBrowser* m_browser = nullptr;
};

} // namespace batchfit
