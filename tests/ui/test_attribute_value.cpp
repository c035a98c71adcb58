#include "catch_compat.h"
#include "gui/document/attribute_value.h"

using namespace batchfit;

TEST_CASE("attribute values parse from what a user types", "[attributes]") {
    CHECK(std::get<std::int64_t>(*AttributeValue::parse(QStringLiteral("64"))) == 64);
    CHECK(std::get<bool>(*AttributeValue::parse(QStringLiteral("false"))) == false);
    CHECK(std::get<double>(*AttributeValue::parse(QStringLiteral("1e-5"))) == Approx(1e-5));
    CHECK(std::get<std::vector<std::int64_t>>(*AttributeValue::parse(QStringLiteral("[3, 3]"))) ==
          std::vector<std::int64_t>{3, 3});
    CHECK(std::get<std::string>(*AttributeValue::parse(QStringLiteral("flash"))) == "flash");

    const AttrValue dbl = 0.5;
    CHECK(std::holds_alternative<double>(*AttributeValue::parse(QStringLiteral("1"), &dbl)));
    const AttrValue list = std::vector<std::int64_t>{2, 2};
    CHECK(std::get<std::vector<std::int64_t>>(*AttributeValue::parse(QStringLiteral("3"), &list)) ==
          std::vector<std::int64_t>{3});
    const AttrValue integer = std::int64_t{1};
    CHECK(std::holds_alternative<std::string>(*AttributeValue::parse(QStringLiteral("same"), &integer)));

    auto bad = AttributeValue::parse(QStringLiteral("sixty"), &integer);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("sixty") != std::string::npos);
    auto badList = AttributeValue::parse(QStringLiteral("[3, x]"));
    REQUIRE_FALSE(badList);
    CHECK(badList.error().message.find("'x'") != std::string::npos);
    CHECK_FALSE(AttributeValue::parse(QStringLiteral("[3, 3")));
    CHECK_FALSE(AttributeValue::parse(QStringLiteral("  ")));

    CHECK(AttributeValue::toText(AttrValue{0.5}) == QStringLiteral("0.5"));
    CHECK(AttributeValue::toText(AttrValue{2.0}) == QStringLiteral("2.0"));
    CHECK(AttributeValue::toText(AttrValue{std::vector<std::int64_t>{1, 2}}) == QStringLiteral("[1,2]"));
}
