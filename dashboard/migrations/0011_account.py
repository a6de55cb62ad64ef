# Roles at the desk (models.Account): every account there is when this runs was the owner's, so
# each is given a row as an owner.

from django.db import migrations, models
import django.db.models.deletion


def existing_are_owners(apps, schema_editor):
    User, Account = apps.get_model("auth", "User"), apps.get_model("dashboard", "Account")
    Account.objects.bulk_create(Account(user=u, role="owner") for u in User.objects.all())


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('dashboard', '0010_service'),
    ]

    operations = [
        migrations.CreateModel(
            name='Account',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('owner', 'owner: may change'), ('viewer', 'viewer: reads and debugs')], max_length=10)),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='desk', to='auth.user')),
            ],
        ),
        migrations.RunPython(existing_are_owners, migrations.RunPython.noop),
    ]
