from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0004_evalrun'),
    ]

    operations = [
        migrations.CreateModel(
            name='SignInFailures',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=200, unique=True)),
                ('failures', models.PositiveIntegerField(default=0)),
                ('started', models.DateTimeField()),
            ],
        ),
    ]
