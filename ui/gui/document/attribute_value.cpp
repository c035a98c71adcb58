#include "gui/document/attribute_value.h"

#include <QStringList>
#include <cmath>

namespace batchfit {

namespace {

Error err(const QString& message) {
    return makeError(message.toStdString());
}

} // namespace

Result<AttrValue> AttributeValue::parse(const QString& input, const AttrValue* like) {
    const QString text = input.trimmed();
    if (text.isEmpty()) return err(tr("a value is required (delete the attribute to use the default)"));
    const bool wantDouble = like && std::holds_alternative<double>(*like);
    const bool wantList = like && std::holds_alternative<std::vector<std::int64_t>>(*like);
    const bool wantString = like && std::holds_alternative<std::string>(*like);

    if (text.startsWith(QLatin1Char('['))) {
        if (!text.endsWith(QLatin1Char(']')))
            return err(tr("'%1' starts a list but has no closing ']'").arg(text));
        std::vector<std::int64_t> values;
        const QString inner = text.mid(1, text.size() - 2).trimmed();
        if (!inner.isEmpty()) {
            for (const QString& part : inner.split(QLatin1Char(','))) {
                bool ok = false;
                const qlonglong v = part.trimmed().toLongLong(&ok);
                if (!ok) return err(tr("list items must be whole numbers; '%1' is not").arg(part.trimmed()));
                values.push_back(v);
            }
        }
        return AttrValue{values};
    }
    if (wantString) return AttrValue{text.toStdString()};
    if (text == QLatin1String("true") || text == QLatin1String("false"))
        return AttrValue{text == QLatin1String("true")};
    bool isInt = false;
    const qlonglong i = text.toLongLong(&isInt);
    if (isInt) {
        if (wantDouble) return AttrValue{static_cast<double>(i)};
        if (wantList) return AttrValue{std::vector<std::int64_t>{i}};
        return AttrValue{static_cast<std::int64_t>(i)};
    }
    bool isDouble = false;
    const double d = text.toDouble(&isDouble);
    if (isDouble) {
        if (!std::isfinite(d)) return err(tr("'%1' is not a finite number").arg(text));
        return AttrValue{d};
    }
    // Words are text values; "same" is the one word a numeric attribute accepts (conv padding).
    if (like && !std::holds_alternative<std::string>(*like) && text != QLatin1String("same"))
        return err(tr("expected %1, e.g. %2; '%3' is not").arg(typeName(*like), toText(*like), text));
    return AttrValue{text.toStdString()};
}

QString AttributeValue::toText(const AttrValue& value) {
    if (const auto* d = std::get_if<double>(&value)) {
        QString s = QString::number(*d, 'g', 17);
        // Keep a double recognisable as one ("1.0", not "1") so editing does not change its type.
        if (!s.contains(QLatin1Char('.')) && !s.contains(QLatin1Char('e'))) s += QStringLiteral(".0");
        // Prefer the short form when it round-trips.
        const QString shortForm = QString::number(*d, 'g', 6);
        if (shortForm.toDouble() == *d)
            return shortForm.contains(QLatin1Char('.')) || shortForm.contains(QLatin1Char('e'))
                       ? shortForm
                       : shortForm + QStringLiteral(".0");
        return s;
    }
    return QString::fromStdString(attrToString(value));
}

QString AttributeValue::typeName(const AttrValue& value) {
    switch (value.index()) {
    case 0:
        return tr("true/false");
    case 1:
        return tr("an integer");
    case 2:
        return tr("a number");
    case 3:
        return tr("text");
    default:
        return tr("a list of integers");
    }
}

} // namespace batchfit
