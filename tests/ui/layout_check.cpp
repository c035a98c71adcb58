#include "layout_check.h"

#include "gui/panels/eliding_label.h"

#include <QAbstractScrollArea>
#include <QLabel>
#include <QLayout>
#include <QWidget>

namespace batchfit::test {

namespace {

QString describe(const QWidget* w) {
    QString name = w->objectName();
    if (name.isEmpty())
        if (auto* l = qobject_cast<const QLabel*>(w)) name = l->text().left(40);
    return QStringLiteral("%1 '%2' %3x%4 at %5,%6")
        .arg(QString::fromLatin1(w->metaObject()->className()), name)
        .arg(w->width())
        .arg(w->height())
        .arg(w->x())
        .arg(w->y());
}

/// True for widgets a scroll area or a view owns (viewports, scroll bars): they are placed by their owner.
bool insideScrollArea(const QWidget* w, const QWidget* root) {
    for (const QWidget* p = w->parentWidget(); p && p != root; p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea*>(p)) return true;
    return false;
}

} // namespace

QStringList layoutProblems(QWidget* root) {
    QStringList problems;
    const QList<QWidget*> all = root->findChildren<QWidget*>();
    for (QWidget* w : all) {
        if (!w->isVisibleTo(root) || w->isWindow() || insideScrollArea(w, root)) continue;
        if (w->objectName().startsWith(QLatin1String("qt_"))) continue; // Qt's own parts (dock title buttons)
        QWidget* parent = w->parentWidget();
        const QLayout* layout = parent ? parent->layout() : nullptr;
        const bool placedByLayout = layout && layout->indexOf(w) >= 0;
        if (!placedByLayout) continue;

        // Squeezed: smaller than the layout's minimum for it (Qt then overlaps or clips its children).
        const QSize min = w->minimumSizeHint().expandedTo(w->minimumSize());
        if (w->sizePolicy().horizontalPolicy() != QSizePolicy::Ignored && min.width() > 0 &&
            w->width() + 1 < min.width())
            problems << QStringLiteral("squeezed (needs %1 px wide): %2").arg(min.width()).arg(describe(w));
        if (w->sizePolicy().verticalPolicy() != QSizePolicy::Ignored && min.height() > 0 &&
            w->height() + 1 < min.height())
            problems << QStringLiteral("squeezed (needs %1 px high): %2").arg(min.height()).arg(describe(w));

        // Overlap with a sibling that the same layout placed.
        for (QWidget* other : all) {
            if (other == w || other->parentWidget() != parent || !other->isVisibleTo(root)) continue;
            if (layout->indexOf(other) < 0 || other < w) continue; // each pair once
            const QRect both = w->geometry().intersected(other->geometry());
            if (both.width() > 1 && both.height() > 1)
                problems << QStringLiteral("overlap: %1 and %2").arg(describe(w), describe(other));
        }

        // Text cut off.
        auto* label = qobject_cast<QLabel*>(w);
        if (!label || label->text().isEmpty() || qobject_cast<ElidingLabel*>(label)) continue;
        if (!label->pixmap().isNull()) continue;
        if (label->wordWrap()) {
            const int needed = label->heightForWidth(label->width());
            if (needed > label->height() + 1)
                problems << QStringLiteral("cut (needs %1 px high): %2").arg(needed).arg(describe(label));
        } else if (label->sizeHint().width() > label->width() + 1) {
            problems << QStringLiteral("cut (needs %1 px wide): %2")
                            .arg(label->sizeHint().width())
                            .arg(describe(label));
        }
    }
    return problems;
}

} // namespace batchfit::test
